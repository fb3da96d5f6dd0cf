FromDump($IN, STOP true) -> FlowIPManager -> TCPReassembler -> FlowLog($OUT, FORMAT json) -> Discard;
