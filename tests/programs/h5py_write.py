"""h5py (Debian's python3-h5py, serial HDF5) writes rows 2-3 of an 8 x 128 dataset of doubles
"grid/values" and an attribute "units", for tests/test_hdf5_trace.py. Usage: h5py_write.py FILE"""
import sys

import h5py
import numpy as np

with h5py.File(sys.argv[1], "w") as f:
    values = f.create_dataset("grid/values", shape=(8, 128), dtype="f8")
    values[2:4, :] = np.arange(256.0).reshape(2, 128)
    values.attrs["units"] = 3
