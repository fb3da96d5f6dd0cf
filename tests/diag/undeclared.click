FastUDPFlows -> x;
