q :: Queue;
FastUDPFlows -> q;
