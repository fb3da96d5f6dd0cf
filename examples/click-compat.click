// A configuration in plain Click syntax: compound elements with formal
// parameters, anonymous elements, define, Tee, Paint, Strip/Unstrip.
define($COUNT 1000)

elementclass Colour { $c |
  input -> Paint($c) -> output;
}

src :: InfiniteSource(DATA \<00 11 22 33 44 55  66 77 88 99 aa bb  08 00
                            45 00 00 1c 00 00 00 00 40 11 00 00  0a 00 00 01  0a 00 00 02
                            04 00 00 35 00 08 00 00>,
                      LIMIT $COUNT, BURST 32, STOP true)
  -> t :: Tee(2);

t[0] -> Colour(1) -> Strip(14) -> Unstrip(14) -> ps :: PaintSwitch;
t[1] -> Colour(2) -> ps;

ps[0] -> Discard;
ps[1] -> one :: Counter -> Discard;
ps[2] -> two :: Counter -> Discard;
