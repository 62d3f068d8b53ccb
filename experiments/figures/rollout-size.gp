# gnuplot experiments/figures/rollout-size.gp (from the repository root): the DOPPLER rollout's
# CPU seconds against graph size, log-log (data: rollout-size.dat; EXPERIMENTS.md, issue 30)
set terminal pngcairo size 900,900
set output 'experiments/figures/rollout-size.png'
set logscale xy
set xlabel 'ops'
set ylabel 'CPU seconds (whole doppler place)'
set key outside below maxrows 8
set grid
set xrange [1000:100000]
set title 'DOPPLER rollout vs graph size (Llama-7B training graphs, 8 devices)'
# the intermediate measurements (after, coarsen packed, 93db36e, 5624fdf, 6636b18: columns 5 to 20) stay in
# the data file; the figure shows the first and the latest
set datafile missing 'NaN'
plot 'experiments/figures/rollout-size.dat' u 1:2 w lp pt 7 t 'uniform, before (0280846)', \
     '' u 1:3 w lp pt 5 t 'DGX-1, before', \
     '' u 1:4 w lp pt 9 t 'DGX-1, after (exact to 20,000 ops, surrogate above)', \
     '' u 1:21 w lp pt 7 lw 2 lc rgb 'dark-green' t 'uniform, plain, 133cbe8 (default config)', \
     '' u 1:22 w lp pt 5 lw 2 lc rgb 'dark-blue' t 'uniform, plain, 133cbe8 (zero-shot config)', \
     '' u 1:23 w lp pt 9 lw 2 lc rgb 'dark-orange' t 'uniform, --coarsen 32, 133cbe8 (default config)', \
     '' u 1:24 w lp pt 11 lw 2 lc rgb 'dark-magenta' t 'uniform, --coarsen 32, 133cbe8 (zero-shot config)', \
     0.32*(x/1374) dt 2 lc rgb 'gray' t 'slope 1', \
     0.54*(x/1374)**2 dt 3 lc rgb 'black' t 'slope 2', \
     5 lc rgb 'red' dt 4 t 'goal at 100,000 ops: 5 s'
