#!/usr/bin/python3
"""Convert graph datasets stored as Python pickles or numpy files into the "dpgnn-raw"
intermediate HDF5 file that `dpgnn import` reads (layout: include/dpgnn/graph/import/raw_hdf5.h).

Called by `dpgnn import planetoid|npz|graphsaint`; not meant to be run by hand, although it
can be (`/usr/bin/python3 tools/dpgnn_convert.py npz --file cora.npz --out raw.h5`).

Why Python: these formats are pickles (Planetoid: Python-2 protocol-2 pickles of scipy
matrices; GraphData npz: protocol-3 pickles inside DEFLATE zip members) or numpy files, for
which numpy/scipy are the reference readers. The converter only re-packages what it reads:
edges as stored (the C++ side symmetrises, removes duplicates and self-loops and prints the
counts), features, labels and the source's split. Everything it changes (1-based labels,
weights dropped, pickled npz members) is written to /notes and printed by `dpgnn import`.

Only Debian's python3-numpy, python3-scipy and python3-h5py are used. Exit codes: 0 ok,
2 bad arguments, 3 malformed input, 4 missing/unreadable file, 5 missing Python module.
The last line on stderr is the error message.
"""
import argparse
import json
import os
import pickle
import sys
import warnings

EXIT_USAGE, EXIT_DATA, EXIT_IO, EXIT_MODULE = 2, 3, 4, 5

try:
    import numpy as np
    import scipy.sparse as sp
    import h5py
except ImportError as e:  # the C++ side names the Debian packages
    sys.stderr.write("the Python converter needs numpy, scipy and h5py: %s (interpreter %s)\n" % (e, sys.executable))
    sys.exit(EXIT_MODULE)


class ConvertError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def data_error(msg):
    return ConvertError(EXIT_DATA, msg)


def io_error(msg):
    return ConvertError(EXIT_IO, msg)


def require_file(path, hint=""):
    if not os.path.isfile(path):
        raise io_error("missing input file '%s'%s" % (path, hint))
    return path


class Raw:
    """What the C++ RawGraph holds (see raw_hdf5.h)."""

    def __init__(self, name, source, num_nodes):
        self.name, self.source, self.num_nodes = name, source, int(num_nodes)
        self.setting = "transductive"
        self.src = self.dst = np.zeros(0, dtype=np.int64)
        self.features_dense = None  # float32 [N, F]
        self.features_csr = None    # scipy CSR [N, F]
        self.labels = None          # int64 [N], -1 unlabelled
        self.label_matrix = None    # uint8 [N, C]
        self.num_classes = 0
        self.label_names = None
        self.masks = None           # dict train/val/test -> uint8 [N]
        self.notes = []

    def note(self, msg):
        self.notes.append("%s: %s" % (self.name, msg))

    def write(self, path):
        n = self.num_nodes
        with h5py.File(path, "w") as f:
            f.attrs["format"] = "dpgnn-raw"
            f.attrs["format_version"] = np.int64(1)
            f.attrs["name"] = self.name
            f.attrs["source"] = self.source
            f.attrs["setting"] = self.setting
            f.attrs["num_nodes"] = np.int64(n)
            f.attrs["multilabel"] = np.int64(1 if self.label_matrix is not None else 0)
            f.attrs["num_classes"] = np.int64(self.num_classes)
            f["edges/src"] = np.ascontiguousarray(self.src, dtype=np.int64)
            f["edges/dst"] = np.ascontiguousarray(self.dst, dtype=np.int64)
            num_features = 0
            if self.features_dense is not None:
                x = np.ascontiguousarray(self.features_dense, dtype=np.float32)
                if x.ndim != 2 or x.shape[0] != n:
                    raise data_error("feature matrix has shape %s for %d nodes" % (x.shape, n))
                num_features = x.shape[1]
                if num_features > 0:
                    f.create_dataset("features", data=x, chunks=(min(n, 4096), num_features))
            elif self.features_csr is not None:
                x = sp.csr_matrix(self.features_csr)
                if x.shape[0] != n:
                    raise data_error("feature matrix has %d rows for %d nodes" % (x.shape[0], n))
                num_features = x.shape[1]
                f["features_csr/indptr"] = x.indptr.astype(np.int64)
                f["features_csr/indices"] = x.indices.astype(np.int64)
                f["features_csr/data"] = x.data.astype(np.float32)
            f.attrs["num_features"] = np.int64(num_features)
            if self.label_matrix is not None:
                f["label_matrix"] = np.ascontiguousarray(self.label_matrix, dtype=np.uint8)
            else:
                f["labels"] = np.ascontiguousarray(self.labels, dtype=np.int64)
            if self.label_names is not None:
                f.create_dataset("label_names", data=[str(s) for s in self.label_names], dtype=h5py.string_dtype())
            if self.masks is not None:
                for k in ("train", "val", "test"):
                    f["masks/" + k] = self.masks[k].astype(np.uint8)
            if self.notes:
                f.create_dataset("notes", data=self.notes, dtype=h5py.string_dtype())


def set_single_labels(raw, y, context):
    """y: int [N] with -1 = unlabelled; shifts 1-based labels (min 1, no 0) to 0-based."""
    y = np.asarray(y).astype(np.int64).reshape(-1)
    if y.shape[0] != raw.num_nodes:
        raise data_error("%s: %d labels for %d nodes" % (context, y.shape[0], raw.num_nodes))
    if (y < -1).any():
        raise data_error("%s: negative label %d (only -1 = unlabelled is allowed)" % (context, y.min()))
    labelled = y[y >= 0]
    if labelled.size == 0:
        raise data_error("%s: no node has a label" % context)
    if labelled.min() == 1:
        raw.note("labels are 1-based (%d..%d, no 0): shifted to 0-based (%d..%d)"
                 % (labelled.min(), labelled.max(), 0, labelled.max() - 1))
        y = np.where(y >= 0, y - 1, -1)
    raw.labels = y
    raw.num_classes = int(y.max()) + 1


def set_edges_from_matrix(raw, a, context):
    a = sp.coo_matrix(a)
    if a.shape[0] != a.shape[1] or a.shape[0] != raw.num_nodes:
        raise data_error("%s: adjacency has shape %s for %d nodes" % (context, a.shape, raw.num_nodes))
    zero = a.data == 0
    if zero.any():
        raw.note("%d explicitly stored zero entries of the adjacency matrix are not edges: dropped" % zero.sum())
        a = sp.coo_matrix((a.data[~zero], (a.row[~zero], a.col[~zero])), shape=a.shape)
    values = np.unique(a.data)
    if values.size > 0 and not (values.size == 1 and values[0] == 1):
        shown = ", ".join("%g" % v for v in values[:10]) + (", ..." if values.size > 10 else "")
        raw.note("adjacency values other than 1 (values: %s): treated as unweighted edges" % shown)
    raw.src = a.row.astype(np.int64)
    raw.dst = a.col.astype(np.int64)


# ---- Planetoid ------------------------------------------------------------------------

def load_pickle(path):
    with open(path, "rb") as f, warnings.catch_warnings():
        # The Python-2 pickles name scipy.sparse.csr, deprecated (not removed) in scipy >= 1.8.
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            return pickle.load(f, encoding="latin1")
        except Exception as e:  # noqa: BLE001 - any unpickling failure is a data error
            raise data_error("%s: cannot unpickle (%s: %s)" % (path, type(e).__name__, e))


def one_hot_to_ids(m, path):
    m = np.asarray(m.todense() if sp.issparse(m) else m)
    if m.ndim != 2:
        raise data_error("%s: expected a 2-D one-hot label matrix, found shape %s" % (path, m.shape))
    ids = m.argmax(axis=1).astype(np.int64)
    ids[m.sum(axis=1) == 0] = -1
    if (m.sum(axis=1) > 1).any():
        raise data_error("%s: %d rows have more than one label (expected one-hot)" % (path, (m.sum(axis=1) > 1).sum()))
    return ids, m.shape[1]


def convert_planetoid(a):
    d, name = a.dir, a.name
    p = lambda part: os.path.join(d, "ind.%s.%s" % (name, part))  # noqa: E731
    for part in ("graph", "test.index", "y", "ally", "ty"):
        require_file(p(part))
    if not a.no_features:
        for part in ("tx", "allx"):
            require_file(p(part), " (node features; pass --no-features to import structure, labels and split only)")
    graph = load_pickle(p("graph"))
    if not isinstance(graph, dict):
        raise data_error("%s: expected a dict {node: [neighbours]}, found %s" % (p("graph"), type(graph).__name__))
    test_index = []
    with open(p("test.index")) as f:
        for lineno, line in enumerate(f, 1):
            if line.strip() == "":
                continue
            try:
                test_index.append(int(line))
            except ValueError:
                raise data_error("%s, line %d: '%s' is not a node id" % (p("test.index"), lineno, line.strip()))
    test_index = np.array(test_index, dtype=np.int64)
    y, num_classes = one_hot_to_ids(load_pickle(p("y")), p("y"))
    ally, c2 = one_hot_to_ids(load_pickle(p("ally")), p("ally"))
    ty, c3 = one_hot_to_ids(load_pickle(p("ty")), p("ty"))
    if not (num_classes == c2 == c3):
        raise data_error("%s: y, ally and ty have different class counts (%d, %d, %d)" % (d, num_classes, c2, c3))
    if len(ty) != len(test_index):
        raise data_error("%s has %d rows but %s has %d ids" % (p("ty"), len(ty), p("test.index"), len(test_index)))
    max_id = -1
    src, dst = [], []
    for u, nbrs in graph.items():
        u = int(u)
        max_id = max(max_id, u)
        for v in nbrs:
            src.append(u)
            dst.append(int(v))
    if dst:
        max_id = max(max_id, max(dst))
    n = max(max_id, int(test_index.max()) if len(test_index) else -1, len(ally) - 1) + 1
    raw = Raw(name, "Planetoid pickles: %s" % p("*"), n)
    raw.src, raw.dst = np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64)
    if (test_index < 0).any():
        raise data_error("%s: negative node id" % p("test.index"))
    labels = np.full(n, -1, dtype=np.int64)
    labels[: len(ally)] = ally
    labels[test_index] = ty  # row i of ty belongs to node test.index[i] (file order)
    raw.labels, raw.num_classes = labels, num_classes
    if a.no_features:
        raw.note("--no-features: node features not imported (F = 0): structure, labels and split only")
    else:
        allx = sp.csr_matrix(load_pickle(p("allx")))
        tx = sp.csr_matrix(load_pickle(p("tx")))
        if allx.shape[0] != len(ally) or tx.shape[0] != len(ty) or allx.shape[1] != tx.shape[1]:
            raise data_error("%s: allx %s / ally %d rows / tx %s / ty %d rows do not match"
                             % (d, allx.shape, len(ally), tx.shape, len(ty)))
        x = sp.lil_matrix((n, allx.shape[1]), dtype=np.float32)
        x[: allx.shape[0]] = allx
        x[test_index] = tx
        raw.features_csr = x.tocsr()
        covered = np.zeros(n, dtype=bool)
        covered[: allx.shape[0]] = True
        covered[test_index] = True
        if (~covered).any():
            raw.note("%d nodes have no row in allx or tx: their features are zero and they are unlabelled"
                     % (~covered).sum())
    unlabelled = int((labels < 0).sum())
    if unlabelled:
        raw.note("%d nodes have no label (no row in ally/ty, or an all-zero row): unlabelled, in no split" % unlabelled)
    # Standard public split (Yang, Cohen & Salakhutdinov 2016; Kipf & Welling 2017):
    # train = the first len(y) nodes, val = the next 500, test = test.index.
    masks = {k: np.zeros(n, dtype=np.uint8) for k in ("train", "val", "test")}
    masks["train"][: len(y)] = 1
    masks["val"][len(y): len(y) + 500] = 1
    masks["test"][test_index] = 1
    raw.masks = masks
    raw.note("standard Planetoid split: train = nodes 0..%d (%d), val = nodes %d..%d (500), test = test.index (%d)"
             % (len(y) - 1, len(y), len(y), len(y) + 499, len(test_index)))
    return raw


# ---- npz (gnn-benchmark / GraphData SparseGraph) ----------------------------------------

def load_npz_members(path):
    """All members of an npz; pickled members only when plain loading refuses them."""
    require_file(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}, False
    except ValueError as e:
        if "allow_pickle" not in str(e):
            raise data_error("%s: cannot read as npz: %s" % (path, e))
    except Exception as e:  # noqa: BLE001 - bad zip, bad npy header, ...
        raise data_error("%s: cannot read as npz (%s: %s)" % (path, type(e).__name__, e))
    try:
        with np.load(path, allow_pickle=True) as z:
            return {k: z[k] for k in z.files}, True
    except Exception as e:  # noqa: BLE001
        raise data_error("%s: cannot read the pickled npz members (%s: %s)" % (path, type(e).__name__, e))


def unbox(v):
    """A 0-d object array (a pickled object inside an npz) -> the object."""
    if isinstance(v, np.ndarray) and v.dtype == object and v.shape == ():
        return v.item()
    return v


def csr_from(m, prefix):
    need = [prefix + s for s in ("_data", "_indices", "_indptr", "_shape")]
    if all(k in m for k in need):
        return sp.csr_matrix((m[need[0]], m[need[1]], m[need[2]]), shape=tuple(m[need[3]]))
    return None


def convert_npz(a):
    path = a.file
    m, pickled = load_npz_members(path)
    name = os.path.splitext(os.path.basename(path))[0]
    adj = csr_from(m, "adj")
    if adj is None:
        for k in ("adj_matrix", "adj"):
            if k in m:
                adj = sp.csr_matrix(unbox(m[k]))
                break
    if adj is None:
        raise data_error("%s: no adjacency (expected adj_data/adj_indices/adj_indptr/adj_shape or adj_matrix); "
                         "members: %s" % (path, ", ".join(sorted(m))))
    n = adj.shape[0]
    raw = Raw(name, "npz: %s" % path, n)
    if pickled:
        raw.note("%s holds pickled objects: loaded with allow_pickle=True (only import files you trust)" % path)
    set_edges_from_matrix(raw, adj, path)
    x = csr_from(m, "attr")
    if x is None:
        for k in ("attr_matrix", "node_attr", "features"):
            if k in m:
                v = unbox(m[k])
                x = sp.csr_matrix(v) if sp.issparse(v) else sp.csr_matrix(np.asarray(v, dtype=np.float32))
                break
    if x is None:
        raw.note("no node features in %s: F = 0" % path)
    else:
        x = sp.csr_matrix(x, dtype=np.float32)
        x.sum_duplicates()
        raw.features_csr = x
    lab_multi = csr_from(m, "labels")
    if lab_multi is not None:
        lm = (lab_multi.toarray() != 0).astype(np.uint8)
        raw.label_matrix, raw.num_classes = lm, lm.shape[1]
    else:
        y = None
        for k in ("labels", "node_label", "y"):
            if k in m:
                y = np.asarray(unbox(m[k]))
                break
        if y is None:
            raise data_error("%s: no labels (expected 'labels' or 'node_label'); members: %s"
                             % (path, ", ".join(sorted(m))))
        if y.ndim == 2:  # one-hot / multi-hot matrix
            if (y.sum(axis=1) <= 1).all():
                ids = y.argmax(axis=1).astype(np.int64)
                ids[y.sum(axis=1) == 0] = -1
                set_single_labels(raw, ids, path)
                raw.num_classes = y.shape[1]
            else:
                raw.label_matrix, raw.num_classes = (y != 0).astype(np.uint8), y.shape[1]
        else:
            set_single_labels(raw, y, path)
    names = None
    if "class_names" in m:
        names = list(np.asarray(unbox(m["class_names"])).reshape(-1))
    elif "metadata" in m:
        meta = unbox(m["metadata"])
        if isinstance(meta, dict) and "class_names" in meta:
            names = list(np.asarray(meta["class_names"]).reshape(-1))
    if names is not None:
        if len(names) == raw.num_classes:
            raw.label_names = [str(s) for s in names]
        else:
            raw.note("%d class names for %d classes: class names not stored" % (len(names), raw.num_classes))
    return raw


# ---- GraphSAINT -------------------------------------------------------------------------

def load_scipy_npz(path):
    require_file(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            fmt = z["format"].item()
            fmt = fmt.decode() if isinstance(fmt, bytes) else str(fmt)
            if fmt != "csr" and fmt != "csc" and fmt != "coo":
                raise data_error("%s: unsupported sparse format '%s'" % (path, fmt))
            return sp.load_npz(path).tocsr()
    except ConvertError:
        raise
    except Exception as e:  # noqa: BLE001
        raise data_error("%s: cannot read as a scipy sparse npz (%s: %s)" % (path, type(e).__name__, e))


def load_json(path):
    require_file(path)
    try:
        with open(path) as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise data_error("%s: not valid JSON: %s" % (path, e))


def convert_graphsaint(a):
    d = a.dir
    adj = load_scipy_npz(os.path.join(d, "adj_full.npz"))
    n = adj.shape[0]
    name = os.path.basename(os.path.normpath(d))
    raw = Raw(name, "GraphSAINT: %s" % d, n)
    raw.setting = "inductive"
    set_edges_from_matrix(raw, adj, os.path.join(d, "adj_full.npz"))
    feats_path = require_file(os.path.join(d, "feats.npy"))
    try:
        x = np.load(feats_path, allow_pickle=False)
    except Exception as e:  # noqa: BLE001
        raise data_error("%s: cannot read (%s: %s)" % (feats_path, type(e).__name__, e))
    if x.ndim != 2 or x.shape[0] != n:
        raise data_error("%s: shape %s, expected (%d, F)" % (feats_path, x.shape, n))
    raw.features_dense = x.astype(np.float32, copy=False)
    cm_path = os.path.join(d, "class_map.json")
    class_map = load_json(cm_path)
    if not isinstance(class_map, dict) or not class_map:
        raise data_error("%s: expected a non-empty object {\"<node id>\": label}" % cm_path)
    # Keys are strings: map each by its integer value (sorted string order would put
    # "10" before "2").
    items = []
    for k, v in class_map.items():
        try:
            node = int(k)
        except ValueError:
            raise data_error("%s: key '%s' is not an integer node id" % (cm_path, k))
        if node < 0 or node >= n:
            raise data_error("%s: node id %d out of range [0, %d)" % (cm_path, node, n))
        items.append((node, v))
    first = items[0][1]
    if isinstance(first, list):
        c = len(first)
        lm = np.zeros((n, c), dtype=np.uint8)
        for node, v in items:
            if not isinstance(v, list) or len(v) != c:
                raise data_error("%s: node %d: expected a list of %d 0/1 values" % (cm_path, node, c))
            lm[node] = np.asarray(v, dtype=np.int64) != 0
        raw.label_matrix, raw.num_classes = lm, c
    else:
        y = np.full(n, -1, dtype=np.int64)
        for node, v in items:
            if not isinstance(v, int):
                raise data_error("%s: node %d: label %r is not an integer" % (cm_path, node, v))
            y[node] = v
        set_single_labels(raw, y, cm_path)
    if len(items) < n:
        raw.note("%d of %d nodes have no entry in class_map.json" % (n - len(items), n))
    role_path = os.path.join(d, "role.json")
    role = load_json(role_path)
    masks = {}
    for key, split in (("tr", "train"), ("va", "val"), ("te", "test")):
        if key not in role:
            raise data_error("%s: no '%s' list" % (role_path, key))
        ids = np.asarray(role[key], dtype=np.int64)
        if ids.size and (ids.min() < 0 or ids.max() >= n):
            raise data_error("%s: '%s' has a node id out of range [0, %d)" % (role_path, key, n))
        mk = np.zeros(n, dtype=np.uint8)
        mk[ids] = 1
        masks[split] = mk
    raw.masks = masks
    train_path = os.path.join(d, "adj_train.npz")
    if os.path.isfile(train_path):
        # adj_train is adj_full restricted to training nodes; the inductive setting derives
        # it from the train mask, so only its consistency is checked.
        at = load_scipy_npz(train_path)
        tr = masks["train"].astype(bool)
        expect = adj.multiply(tr[:, None]).multiply(tr[None, :]).tocsr()
        expect.eliminate_zeros()
        at.eliminate_zeros()
        if at.shape != adj.shape or at.nnz != expect.nnz or (abs(at - expect) != 0).nnz != 0:
            raw.note("warning: adj_train.npz is not adj_full restricted to the training nodes; dpgnn uses adj_full "
                     "with setting=inductive (training graph = the train-induced subgraph)")
        else:
            raw.note("adj_train.npz = adj_full restricted to the training nodes (checked); not stored separately")
    return raw


def main():
    ap = argparse.ArgumentParser(prog="dpgnn_convert.py", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="format", required=True)
    pp = sub.add_parser("planetoid")
    pp.add_argument("--dir", required=True)
    pp.add_argument("--name", required=True)
    pp.add_argument("--no-features", action="store_true")
    pn = sub.add_parser("npz")
    pn.add_argument("--file", required=True)
    pg = sub.add_parser("graphsaint")
    pg.add_argument("--dir", required=True)
    for p in (pp, pn, pg):
        p.add_argument("--out", required=True)
    a = ap.parse_args()  # exits with code 2 on bad arguments
    try:
        raw = {"planetoid": convert_planetoid, "npz": convert_npz, "graphsaint": convert_graphsaint}[a.format](a)
        raw.write(a.out)
    except ConvertError as e:
        sys.stderr.write("%s\n" % e)
        sys.exit(e.code)
    except MemoryError:
        sys.stderr.write("out of memory while converting\n")
        sys.exit(EXIT_IO)
    except OSError as e:
        sys.stderr.write("%s\n" % e)
        sys.exit(EXIT_IO)


if __name__ == "__main__":
    main()
