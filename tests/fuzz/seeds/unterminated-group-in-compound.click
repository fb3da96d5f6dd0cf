ettttttttttttttttttlementclass Twice { $a, $b | inPaint($b)(-: [1]output }
define($N 1){
