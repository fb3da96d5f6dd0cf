a :: Counter -> [2]b :: Tee(2); a -> a; x :: Nope(; y :: { $q | input -> output } (1, 2);
