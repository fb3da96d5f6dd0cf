src :: FastUDPFlows -> Discard;
src -> Discard;
