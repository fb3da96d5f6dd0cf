// A pcapng input (written by editcap) through a queue, to a pcap output.
FromDump($IN, STOP true) -> Queue -> Unqueue(BURST 7) -> ToDump($OUT);
