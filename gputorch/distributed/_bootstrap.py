"""What each process started by ``gputorch.distributed.run`` runs first: torchrun's environment
variables from MPI's (Hydra's ``PMI_RANK``, ``PMI_SIZE``, ``MPI_LOCALRANKID``), then the script."""
import os
import runpy
import sys


def _environment():
    rank = int(os.environ.get("PMI_RANK", "0"))
    size = int(os.environ.get("PMI_SIZE", "1"))
    local_rank = int(os.environ.get("MPI_LOCALRANKID", "0"))
    local_size = int(os.environ.get("MPI_LOCALNRANKS", os.environ.get("LOCAL_WORLD_SIZE", "1")))
    os.environ.update({"RANK": str(rank), "WORLD_SIZE": str(size), "LOCAL_RANK": str(local_rank),
                       "LOCAL_WORLD_SIZE": str(local_size), "GROUP_RANK": str(rank // max(local_size, 1)),
                       "ROLE_RANK": str(rank), "ROLE_WORLD_SIZE": str(size)})


def main():
    _environment()
    argv = sys.argv[1:]
    if argv and argv[0] == "--no-python":
        os.execvp(argv[1], argv[1:])
    if argv and argv[0] == "-m":
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
