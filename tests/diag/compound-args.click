elementclass Pair { $a, $b | input -> Paint($a) -> Paint($b) -> output }
FastUDPFlows -> Pair(1) -> Discard;
