"""What runs the models of library.py; nothing here is edited to change a model.

    contract      the model contract as Protocols: the kinds of model class, what engine.create builds, the
                  optional methods
    trainer       Trainer: runs a modeling.Model (autograd, optimizer, test loss, state, errors)
    table_rows    TableRows: a Table's rows during a step and its per-row optimizer state
    written_marks WrittenMarks: the rows of a table steps wrote, for engine.written_rows
    noise         the noise distribution and the seeded noise-word streams (NumPy only)
    placement     InPlace, Placement: the weights as a model sees them (the C++ buffer as NumPy arrays or as
                  tensors, or its copy on a GPU)
    state_codec   a learner's state as plain arrays and JSON, for checkpoints
    fused_neg     FusedNegCBOW, the built-in default model "neg": its step one fused C++ kernel (fedavg_kernels) on
                  NumPy, no torch
    fused_neg_torch  the same step as torch ops, where the kernel cannot run (a GPU, no fedavg_kernels)
    memory        the machine's physical memory, against which engine.param_shapes bounds a model's sizes
    model_source  the model a run trains and its file, and the warning for an edit of a model the run does not
                  select
    decompress    the plain copy a job reads in place of a compressed corpus (gzip, bzip2, xz); no torch

engine.py imports these as the package runtime of the folder it is in (python/, or a copy given with --python:
the program puts that folder first on sys.path).  Importing the package does no work.
"""
