"""Shared by the benchmarks: the demo classifier, and nltk's edit distance written out line by line
(nltk.metrics.distance.edit_distance: a pure-Python dynamic programme, one call per cell)."""


def demo_classifier():
    """The embedded demo sentiment model on the CPU (built on first use)."""
    from textxai.classifier import as_classifier

    return as_classifier("textxai/demo-sentiment", device="cpu")


def _edit_dist_init(len1, len2):
    lev = []
    for i in range(len1):
        lev.append([0] * len2)
    for i in range(len1):
        lev[i][0] = i
    for j in range(len2):
        lev[0][j] = j
    return lev


def _last_left_t_init(sigma):
    return {c: 0 for c in sigma}


def _edit_dist_step(lev, i, j, s1, s2, last_left, last_right, substitution_cost=1, transpositions=False):
    c1 = s1[i - 1]
    c2 = s2[j - 1]
    a = lev[i - 1][j] + 1
    b = lev[i][j - 1] + 1
    c = lev[i - 1][j - 1] + (substitution_cost if c1 != c2 else 0)
    d = c + 1
    if transpositions and last_left > 0 and last_right > 0:
        d = lev[last_left - 1][last_right - 1] + i - last_left + j - last_right - 1
    lev[i][j] = min(a, b, c, d)


def nltk_edit_distance(s1, s2, substitution_cost=1, transpositions=False):
    len1, len2 = len(s1), len(s2)
    lev = _edit_dist_init(len1 + 1, len2 + 1)
    sigma = set()
    sigma.update(s1)
    sigma.update(s2)
    last_left_t = _last_left_t_init(sigma)
    for i in range(1, len1 + 1):
        last_right_buf = 0
        for j in range(1, len2 + 1):
            last_left = last_left_t[s2[j - 1]]
            last_right = last_right_buf
            if s1[i - 1] == s2[j - 1]:
                last_right_buf = j
            _edit_dist_step(lev, i, j, s1, s2, last_left, last_right, substitution_cost, transpositions)
        last_left_t[s1[i - 1]] = i
    return lev[len1][len2]
