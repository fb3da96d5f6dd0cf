FromIPSummaryDump($IN, STOP true, CHECKSUM true) -> EtherEncap(0x0800, 02:00:00:00:00:01, 02:00:00:00:00:02) -> ToDump($OUT);
