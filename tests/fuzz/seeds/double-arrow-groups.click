a, b, c, d :: Idle;
a [1,] => ( -> c ), ( [0] -> b -> [0] ), d;
x :: Idle => { -> } => [] y :: Idle;
