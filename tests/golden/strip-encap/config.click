// Replace the Ethernet header: strip it, push a new one.
FromDump($IN, STOP true) -> Strip(14) -> EtherEncap(0x0800, 02:aa:bb:cc:dd:01, 02:aa:bb:cc:dd:02) -> ToDump($OUT);
