// 64-byte forwarding from the in-memory generator to Discard: the simplest
// data path, used by `shoal bench`. Try: shoal run examples/forward.click --threads 2
define($LENGTH 64, $FLOWS 1024, $LIMIT 5000000, $BURST 32)
FastUDPFlows(LENGTH $LENGTH, FLOWS $FLOWS, LIMIT $LIMIT, BURST $BURST, STOP true)
  -> c :: Counter
  -> Discard;
