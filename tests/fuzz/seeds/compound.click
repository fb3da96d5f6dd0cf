elementclass Twice { $a, $b | input -> Paint($a) -> Counter -> [0]output; input[1] -> Paint($b) -> [1]output }
define($N 10)
s :: InfiniteSource(LIMIT $N) -> t :: Twice(1, 2) -> Discard; Idle -> [1]t[1] -> q :: Queue -> Unqueue -> Discard;
c :: Classifier(12/0800 !23/06, 12/86dd, -); FastUDPFlows(LIMIT 5) -> c; c[0] -> Discard; c[1] -> Discard; c[2] -> Discard;
Script(set x 1, print $(add $x 2), wait 1ms, goto end $(eq $x 1), label end);
