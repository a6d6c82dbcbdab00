"""Model runners: the only code that imports torch and transformers, and only inside the
functions that need them, so that the web process never loads them."""
