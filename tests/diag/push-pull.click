src :: InfiniteSource -> t :: Tee;
t[0] -> u :: Unqueue -> Discard;
t[1] -> Discard;
