// TCP over IPv4 only; everything else counted and dropped.
FromDump($IN, STOP true) -> c :: Classifier(12/0800 23/06, -) -> ToDump($OUT); c[1] -> Discard;
