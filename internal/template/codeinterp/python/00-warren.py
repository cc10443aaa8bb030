# warren: registers the E2B result formatters (MIME e2b/data for pandas
# DataFrames, e2b/chart for matplotlib figures) in this IPython. Loaded for
# every IPython through /etc/ipython/ipython_config.py. The code lives in a
# module so that nothing but this loader's name touches the user namespace,
# and that name is deleted at the end.
def _warren_load():
    import importlib.util
    import sys

    path = "/usr/local/lib/warren/python/warren_display.py"
    try:
        spec = importlib.util.spec_from_file_location("warren_display", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        sys.modules["warren_display"] = mod
        mod.install(get_ipython())  # noqa: F821 (IPython defines it)
    except Exception as e:  # never break the kernel over formatters
        print(f"warren: result formatters not loaded: {e!r}", file=sys.stderr)


_warren_load()
del _warren_load
