src :: FastUDPFlows(LIMIT 10)
  -> c :: Countr
  -> Discard;
