// A word used as a class is a class for the rest of the file (Click's
// lexer): 'Tee2' inside the compound is an unknown class, and an element
// may not take its name afterwards.
elementclass Split {
  input -> Tee2 -> output;
}
Tee2 :: Counter;
Idle -> Tee2 -> Discard;
