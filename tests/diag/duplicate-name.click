c :: Counter;
d :: Discard;
c :: Counter;
