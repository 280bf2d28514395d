"""The models of fedavg_mpi.  Edit this file to change the model.

A model is a class: its parameters by name and shape (params), its loss
written with PyTorch autograd (loss), an optimizer from torch.optim
(optimizer); its settings are class attributes.  A loss may use the
building blocks of blocks.py (rows_mean, negative_sampling): the same as a
few torch ops, and fast.  MODELS names the models and cfg.json picks one
with "model"; "neg", the default, is built into the runtime (below).
Recipes (sum instead of mean, a hidden layer, Adam, full softmax) are in
docs/models.md, "Change the model".
engine.py, beside this file, is the contract with the C++ program, and
runtime/ runs the models; you need not read them.

Check a change:  /usr/bin/python3 -m pytest tests/python -q
Train with it:   mpiexec -n 5 build/src/fedavg_mpi --python DIR corpus.txt
                 (DIR: a copy of this folder, with your library.py)
"""

import math

import torch
import torch.nn.functional as F
from torch.nn import init

from blocks import negative_sampling, rows_mean
from modeling import Dense, Model, Table
from runtime.contract import ModelClass


class NegCBOW(Model):
    """CBOW with negative sampling (word2vec's loss), trained with SGD: the
    mean h of the context words' embeddings should score high against the
    target's output vector and low against the noise words'."""

    lr = 0.1        # per window, as word2vec's rate (see optimizer)
    negatives = 5   # noise words per window, drawn from count ** 0.75

    def params(self):
        v, d = self.cfg["vocab_size"], self.cfg["dim"]
        # "sqrt": a word that fills c windows of a batch moves sqrt(c) times
        # its mean step, not c times (which diverges at word2vec's rates).
        return {"embedding": Table(v, d, duplicates="sqrt", init=lambda t:
                                   init.uniform_(t, -0.5 / d, 0.5 / d)),
                "out_vectors": Table(v, d, duplicates="sqrt",
                                     init=init.zeros_)}

    def loss(self, p, context, target, noise):
        h = rows_mean(p.embedding, context)                     # [n, D]
        return negative_sampling(h, p.out_vectors, target, noise)

    def optimizer(self, params):
        # SGD at word2vec's rates (Model.sgd_groups): lr per window for the
        # rows of words, lr itself for a parameter that every window uses.
        return torch.optim.SGD(self.sgd_groups(params), lr=self.lr)


class SoftmaxCBOW(Model):
    """The report's CBOW: the mean context embedding goes through a dense
    layer with a softmax over the whole vocabulary; cross-entropy; Adam.
    Initialised as the report's Keras model was."""

    lr = 0.01

    def params(self):
        v, d = self.cfg["vocab_size"], self.cfg["dim"]
        glorot = math.sqrt(6.0 / (v + d))
        # Dense, not Table: Adam moves every row at every step, as in Keras.
        return {"embedding": Dense(v, d, init=lambda t:
                                   init.uniform_(t, -0.05, 0.05)),
                "out_weight": Dense(d, v, init=lambda t:
                                    init.uniform_(t, -glorot, glorot)),
                "out_bias": Dense(v, init=init.zeros_)}

    def loss(self, p, context, target, noise):
        h = p.embedding[context].mean(1)
        logits = torch.addmm(p.out_bias, h, p.out_weight)
        return F.cross_entropy(logits, target)

    def optimizer(self, params):
        return torch.optim.Adam(params.values(), lr=self.lr)


# cfg.json "model" -> class.  "neg", the default, is not here: it is NegCBOW's model with its step fused into one
# C++ kernel (fast, not for editing), built into the runtime (runtime/fused_neg.py), and a run of it imports neither
# this file nor torch.  To change the model, edit NegCBOW and select "neg_autograd".
MODELS: dict[str, ModelClass] = {"neg_autograd": NegCBOW,
                                 "softmax": SoftmaxCBOW}
