"""One helper that creates (or reuses) the SparkSession the ingest jobs run on."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

LOCAL_SETTINGS: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
    "spark.driver.memory": "1g",
    # a local session talks to itself only: bind the driver to loopback, never to a network interface
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
}


def session(master: str = "local[*]", app_name: str = "lineage-ingest") -> SparkSession:
    """The active SparkSession, or a new one on ``master`` with modest local settings.

    Executors run this interpreter (``PYSPARK_PYTHON`` defaults to ``sys.executable``), so the platform
    package they import is the one the driver uses. On a cluster master, ``spark-submit`` options and
    ``spark-defaults.conf`` still win for anything set there.
    """
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.master(master).appName(app_name)
    if master.startswith("local"):
        for key, value in LOCAL_SETTINGS.items():
            builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
