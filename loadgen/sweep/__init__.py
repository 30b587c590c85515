"""Many runs as one measurement: `goodput sweep` (a series of load points) and `goodput capacity` (the
search for the highest rate that still meets the SLO). Each point is an ordinary run in `DIR/points/`;
this package plans the points, runs them against one server, and writes what they add up to."""
