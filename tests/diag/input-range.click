InfiniteSource -> [1]Discard;
