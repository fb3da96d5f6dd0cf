FastUDPFlows(LENGTH 64,
             FLOWS lots)
  -> Discard;
