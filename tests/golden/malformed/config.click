// Runt and truncated frames: EtherRewrite drops those under 14 bytes, the
// rest are rewritten; the classifier never reads past a frame's end.
FromDump($IN, STOP true) -> EtherRewrite(SRC 02:00:00:00:00:0a, DST 02:00:00:00:00:0b)
  -> c :: Classifier(12/0800 23/11 36/0035, -) -> Paint(1) -> ToDump($OUT);
c[1] -> Discard;
