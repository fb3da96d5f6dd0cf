// Tee copies to output 0 before the original goes to output 1; the two
// streams meet again in one file, so the order shows the batch semantics.
FromDump($IN, STOP true, BURST 8) -> t :: Tee;
t[0] -> rr :: RoundRobinSwitch -> o :: Null -> ToDump($OUT);
rr[1] -> Discard;
t[1] -> o;
