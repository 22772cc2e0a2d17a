# %% tags=["parameters"]
DATA = "../data"
# "dask": tables read partition by partition when computed, for logs larger than memory.
ENGINE = "pandas"
# With ENGINE = "dask": a distributed scheduler's address, or "threads" (default), "processes".
SCHEDULER = None
# With ENGINE = "dask": keep the rows in the workers' memory after the first read, so that
# every later cell is quick; only for data that the cluster's memory holds.
PERSIST = False

# %%
import warnings

import matplotlib.pyplot as plt
import pandas as pd

import explicit_audit as ea
from explicit_audit import plots, widgets
from explicit_audit.report.figures import use_report_figures
from explicit_audit.report.tables import Percentages, use_report_tables

# A finding's detail whole: a rebuilt hash or a payload's digest is never cut short.
pd.set_option("display.max_colwidth", None)
pd.set_option("display.width", 200)
pd.set_option("display.max_rows", 60)
# Tables as a report shows them: "—" for a missing value, 12,345, rates as 12.5%.
use_report_tables()
# Each figure's image with its title and axes as alternative text, for a screen reader.
use_report_figures()
if ENGINE == "dask":
    ea.use_scheduler(SCHEDULER)
with warnings.catch_warnings():
    # Inputs that could not be loaded are listed below, from audit.rejected.
    warnings.simplefilter("ignore", ea.RejectedRowsWarning)
    audit = ea.load(DATA, engine=ENGINE, progress=False)
if PERSIST:
    audit = audit.persist()
# .accounting(): rejected rows, sources and row counts in memory (one pass on Dask).
audit = audit.accounting()
audit.summary()
