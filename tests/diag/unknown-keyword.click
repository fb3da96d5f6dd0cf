FastUDPFlows(LIMIT 5, SPEED 3) -> Discard;
