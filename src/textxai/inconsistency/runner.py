"""``textxai run inconsistency`` and the inconsistency section of ``textxai demo``: argparse -> options -> analyse -> write.

Feeds a counterfactual editor its own output (``--steps`` times) on the texts of ``--data`` and reports
inc@n, minimality@n and flip_rate@n, with the per-step box-plots of the paper's Fig. 3. ``--chains FILE``
scores chains made elsewhere instead (a .jsonl with an ``edits`` list per line and optionally ``labels``).
The defaults are those of the option groups (:mod:`textxai.inconsistency.options`).
"""
from __future__ import annotations

import argparse
import dataclasses

from textxai import cli_intervals, parallel
from textxai.editors import EDITORS
from textxai.inconsistency.analysis import analyse
from textxai.inconsistency.checks import POOLINGS, SELECTIONS, read_chains
from textxai.inconsistency.options import EditorOptions, ScoreOptions
from textxai.lm import bos_arg
from textxai.validation import positive_int_arg

__all__ = ["add_arguments", "options", "perplexity_lm", "run", "demo"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    score, edit = ScoreOptions(), EditorOptions()
    parser.add_argument("--editor", default=edit.editor, choices=sorted(EDITORS),
                        help=f"built-in editor run on the texts (default {edit.editor})")
    parser.add_argument("--steps", type=positive_int_arg, default=edit.steps,
                        help=f"feedback steps (default {edit.steps}, as the paper)")
    parser.add_argument("--n", type=positive_int_arg, nargs="+", default=score.n, help="report inc@n etc. for these n")
    parser.add_argument("--pooling", default=score.pooling, choices=POOLINGS)
    parser.add_argument("--word-tokenizer", default=score.word_tokenizer, choices=("spacy", "whitespace"))
    parser.add_argument("--selection", default=edit.selection, choices=SELECTIONS,
                        help="which candidate to keep at each step (default: the paper's rule)")
    parser.add_argument("--chains", default=None, metavar="PATH",
                        help="score these chains instead of running the editor (.jsonl: {'edits': [...], 'labels': [...]})")
    parser.add_argument("--lm", default=None, help="causal LM for perplexity@n: a Hub id, a folder, a .gguf file or "
                                                   "textxai/smollm2-135m-instruct (the packaged one)")
    parser.add_argument("--bos", default="auto", type=bos_arg,
                        help="start token of perplexity: auto (the LM's BOS, CEval's rule), none, a token or a token id")
    parser.add_argument("--editor-model", default=edit.editor_model,
                        help="--editor llm: the instruct LM that edits (default textxai/smollm2-135m-instruct)")
    parser.add_argument("--editor-candidates", type=positive_int_arg, default=edit.editor_candidates,
                        help=f"--editor llm: rewrites per text, the first greedy, the others sampled; the classifier "
                             f"chooses the flipping one closest to the text (default {edit.editor_candidates})")
    parser.add_argument("--editor-prompt", default=edit.editor_prompt, choices=("ceval", "minimal", "zero_shot"),
                        help=f"--editor llm: CEval's one-shot request or a minimal-edit request (default {edit.editor_prompt})")
    parser.add_argument("--n-words", type=positive_int_arg, default=edit.n_words,
                        help=f"built-in editor: words replaced at most (default {edit.n_words})")
    parser.add_argument("--max-words", type=positive_int_arg, default=edit.max_words,
                        help="built-in editor: most words one edit changes (default --n-words; larger edits allow inc > 2)")
    parser.add_argument("--n-neighbours", type=positive_int_arg, default=edit.n_neighbours,
                        help=f"built-in editor: GloVe neighbours considered per word (default {edit.n_neighbours})")
    parser.add_argument("--n-substitutes", type=positive_int_arg, default=edit.n_substitutes,
                        help=f"built-in editor: replacements kept per word (default {edit.n_substitutes})")


def options(args) -> dict:
    """The option groups of parsed arguments: ``{"scoring": ScoreOptions, "editing": EditorOptions}``."""
    def group(cls):
        return cls(**{f.name: getattr(args, f.name) for f in dataclasses.fields(cls) if hasattr(args, f.name)})

    return {"scoring": group(ScoreOptions), "editing": group(EditorOptions)}


def perplexity_lm(args):
    """The ``--lm`` of the command line with its ``--bos`` (None without ``--lm``)."""
    if not getattr(args, "lm", None):
        return None
    from textxai.lm import as_lm

    return as_lm(args.lm, bos=getattr(args, "bos", "auto"))


def run(args, texts, text_pairs, labels, classifier):
    """Run the editor on the texts (or read --chains) and score the chains: ``(results, figures)``."""
    progress = not getattr(args, "no_progress", False)
    if args.chains:
        chains, chain_labels = read_chains(args.chains)
        inputs = {"chains": chains, "labels": chain_labels}
    else:
        if text_pairs is not None:
            raise ValueError("--pair-column: the built-in editor edits single texts; sentence pairs are not supported")
        inputs = {"texts": texts}
    analysis = analyse(**inputs, classifier=classifier, lm=perplexity_lm(args), intervals=cli_intervals.cli_options(args),
                       batch_size=args.batch_size, progress=progress, **options(args))
    parallel.note(f"inconsistency work of this process: {parallel.work_note()}")
    print(analysis.report)
    return analysis.results, analysis.figures


def demo(progress: bool = True):
    """The inconsistency section of ``textxai demo`` (:func:`textxai.inconsistency.demo.section`)."""
    from textxai.inconsistency.demo import section

    return section(progress=progress)
