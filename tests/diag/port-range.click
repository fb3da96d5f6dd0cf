// a Counter has one output
src :: InfiniteSource -> c :: Counter -> Discard;
c[1] -> Discard;
