FastUDPFlows -> Classifier(12/08000) -> Discard;
