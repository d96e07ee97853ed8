"""The served page's machinery: session workers and debouncing, session hooks, the Gibbs
sampler's process, the warm-up, and every override of Panel internals (``panel_compat``)."""
