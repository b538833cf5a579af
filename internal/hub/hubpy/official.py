# The official Python Hub client (huggingface_hub, pinned with whestbench by
# internal/pyjudge/requirements.txt) and the loaders built on it, driven
# against a Hub at HF_ENDPOINT for the Go test beside it. It calls their
# public functions only, as any user would, and prints what it got as JSON;
# the Go test judges the result.
#
#   push REPO DIR VISIBILITY TAG   whoami, create_repo (VISIBILITY "-": the
#                                  namespace's default) and again with
#                                  exist_ok, upload_folder of DIR, create_tag
#                                  TAG ("-": none), upload_folder of DIR again
#                                  (nothing changed), list_repo_refs
#   read REPO REV OUT              dataset_info and repo_info of REV,
#                                  list_repo_tree (recursive, paged),
#                                  snapshot_download into OUT/snapshot and
#                                  hf_hub_download of every file
#   load REPO REV DIR              whestbench.load_dataset of REPO (each split
#                                  alone, then all) and datasets.load_dataset of
#                                  each card config, every table compared with
#                                  pyarrow's read of DIR's parquet files
#
# The token comes from HF_TOKEN, the Hub from HF_ENDPOINT, the caches from
# HF_HOME: never from the command line.
import hashlib
import json
import os
import sys
from pathlib import Path

from huggingface_hub import HfApi, hf_hub_download, snapshot_download
from huggingface_hub.hf_api import RepoFile


def api():
    return HfApi(endpoint=os.environ["HF_ENDPOINT"], token=os.environ.get("HF_TOKEN") or False)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def refs(hub, repo):
    r = hub.list_repo_refs(repo, repo_type="dataset")
    return {
        "branches": {b.name: b.target_commit for b in r.branches},
        "tags": {t.name: t.target_commit for t in r.tags},
    }


def push(repo, folder, visibility, tag):
    hub = api()
    me = hub.whoami()
    private = None if visibility == "-" else visibility == "private"
    url = hub.create_repo(repo, repo_type="dataset", private=private)
    again = hub.create_repo(repo, repo_type="dataset", exist_ok=True)
    info = hub.upload_folder(
        folder_path=folder,
        repo_id=repo,
        repo_type="dataset",
        commit_message="Upload from the official Python client",
    )
    if tag != "-":
        hub.create_tag(repo, tag=tag, revision=info.oid, repo_type="dataset")
    same = hub.upload_folder(folder_path=folder, repo_id=repo, repo_type="dataset")
    return {
        "again_commit": same.oid,
        "user": me["name"],
        "repo_url": str(url),
        "again_url": str(again),
        "commit": info.oid,
        "refs": refs(hub, repo),
    }


def read(repo, rev, out):
    hub = api()
    info = hub.dataset_info(repo, revision=rev, files_metadata=True)
    same = hub.repo_info(repo, repo_type="dataset", revision=rev)
    tree = []
    for entry in hub.list_repo_tree(repo, revision=info.sha, repo_type="dataset", recursive=True):
        item = {"path": entry.path, "type": "file" if isinstance(entry, RepoFile) else "directory"}
        if item["type"] == "file":
            item["size"] = entry.size
            item["lfs"] = entry.lfs.sha256 if entry.lfs else None
        tree.append(item)
    snap = snapshot_download(repo, repo_type="dataset", revision=info.sha, local_dir=os.path.join(out, "snapshot"))
    files = {}
    for item in tree:
        if item["type"] == "file":
            p = hf_hub_download(repo, item["path"], repo_type="dataset", revision=info.sha)
            files[item["path"]] = {"sha256": sha256(p), "size": os.path.getsize(p)}
    return {
        "sha": info.sha,
        "repo_info_sha": same.sha,
        "private": info.private,
        "siblings": [
            {"path": s.rfilename, "size": s.size, "lfs": s.lfs.sha256 if s.lfs else None}
            for s in info.siblings
        ],
        "tree": tree,
        "snapshot": snap,
        "files": files,
        "refs": refs(hub, repo),
    }


def compare(ds, table):
    """'' when the loaded dataset holds exactly table's rows, else how not."""
    got = ds.with_format("arrow")[:]
    if got.num_rows != table.num_rows:
        return f"{got.num_rows} rows, the pushed parquet {table.num_rows}"
    for name in table.column_names:
        if name not in got.column_names:
            return f"no column {name}"
        if not got.column(name).equals(table.column(name)):
            return f"column {name} differs"
    if sorted(got.column_names) != sorted(table.column_names):
        return f"columns {got.column_names}, the pushed parquet {table.column_names}"
    return ""


def source(ds):
    names = [f["filename"] for f in ds.cache_files]
    return "prepared" if names and all("/prepared/" in n for n in names) else "parquet"


def load(repo, rev, folder):
    import datasets
    import pyarrow.parquet as pq
    import whestbench

    folder = Path(folder)
    md = json.loads((folder / "metadata.json").read_text())
    splits = sorted(md["splits"]) if "splits" in md else [md["split"]]
    pushed = {
        s: pq.read_table(sorted(folder.glob(f"data/{s}-*.parquet"))) for s in splits
    }
    out = {"whestbench": {}, "whestbench_all": {}, "datasets": {}}
    for s in splits:
        ds = whestbench.load_dataset(repo, revision=rev, split=s)
        got = whestbench.metadata(ds)
        out["whestbench"][s] = {
            "differs": compare(ds, pushed[s]),
            "source": source(ds),
            "n_mlps": got.get("n_mlps"),
        }
    if len(splits) > 1:
        for s, ds in whestbench.load_dataset(repo, revision=rev).items():
            out["whestbench_all"][s] = {"differs": compare(ds, pushed[s]), "source": source(ds)}
    configs = sorted({md["splits"][s].get("config", "default") for s in splits}) if "splits" in md else ["default"]
    for name in configs:
        for s, ds in datasets.load_dataset(repo, name, revision=rev).items():
            out["datasets"][f"{name}/{s}"] = {"differs": compare(ds, pushed[s])}
    return out


def main():
    command, *args = sys.argv[1:]
    result = {"push": push, "read": read, "load": load}[command](*args)
    json.dump(result, sys.stdout)


main()
