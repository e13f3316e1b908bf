"""The model seam's rooms, split where its concerns meet; :mod:`textxai.classifier` re-exports every public name.

- :mod:`~textxai.model.passes`: a pass on any torch model -- :func:`frozen_eval` / :func:`model_lock` (eval mode,
  frozen weights, one lock per model), the precisions (``PRECISIONS``, :func:`native_bfloat16`), the logits of an
  output, :func:`content_digest` (the weights by content). Shared with :mod:`textxai.lm`.
- :mod:`~textxai.model.checks`: loading a classifier by name and every check of what was loaded (device, head,
  labels, vocabulary, output kind).
- :mod:`~textxai.model.probabilities`: batched probabilities of token rows, the precision probe, word masking.
- :mod:`~textxai.model.gradients`: embeddings in, logits out (gradient methods, FIM).
- :mod:`~textxai.model.textclassifier`: :class:`TextClassifier` itself (construction, labels, words), made of the
  two rooms above.

The resolver (:func:`textxai.classifier.as_classifier`: a name, a pair, a pipeline or a function -> one cached
classifier) stays in :mod:`textxai.classifier`, above these rooms and :mod:`textxai.blackbox`.
"""
