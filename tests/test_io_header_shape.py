"""A params file whose header is valid JSON of the wrong shape is refused by name, by
load_params and load_feature_names, never with a raw AttributeError."""

import json

import numpy as np
import pytest

import fastgen
from fastgen.io import ParamsFileError


def _arrays(tmp_path):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 3)), np.repeat([0, 1], 20)
    path = fastgen.save_params(tmp_path / "good.npz", fastgen.fit_gda(X, y))
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


@pytest.mark.parametrize("header, match", [
    ([1, 2, 3], "header is not a JSON object"),
    ("fastgen-params", "header is not a JSON object"),
    (7, "header is not a JSON object"),
    (None, "header is not a JSON object"),
    ("fields-list", "malformed header"),
    ("fields-values", "malformed header"),
])
@pytest.mark.parametrize("reader", [fastgen.load_params, fastgen.load_feature_names])
def test_header_of_the_wrong_shape(tmp_path, header, match, reader):
    arrays = _arrays(tmp_path)
    good = json.loads(str(arrays["__fastgen__"][()]))
    if header == "fields-list":
        header = dict(good, fields=list(good["fields"]))
    elif header == "fields-values":
        header = dict(good, fields={k: [v] for k, v in good["fields"].items()})
    path = tmp_path / "bad.npz"
    np.savez(path, **dict(arrays, __fastgen__=np.asarray(json.dumps(header))))
    with pytest.raises(ParamsFileError, match=match) as info:
        reader(path)
    assert "AttributeError" not in str(info.value)
