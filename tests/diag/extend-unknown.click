// '...' extends an earlier definition of the class; there is none.
elementclass Wrap {
  $a | input -> Print($a) -> output
  || ...
}
Idle -> Wrap(x, y) -> Discard;
