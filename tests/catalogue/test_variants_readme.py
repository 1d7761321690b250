"""The variants walkthrough of docs/catalogue-and-content.md, run as written with curl against
gunicorn, twice: a T-shirt in 3 sizes × 2 colours, generated, repriced and bought by variant."""

import ast

import pytest

from tests.conftest import PASSWORD
from tests.ops import test_readme
from tests.ops.test_readme import live, run_walkthrough  # noqa: F401 - live is a fixture

pytestmark = [test_readme.pytestmark, pytest.mark.live]


def test_variants_walkthrough(live, tmp_path):  # noqa: F811 - live is a fixture
    for lines in run_walkthrough(live, tmp_path, "variants-walkthrough"):
        assert lines[0:4] == ["first 5", "again 0", "L 200", "L 200"]
        options, total = lines[4].rsplit(" ", 1)
        assert ast.literal_eval(options) == {"Size": "M", "Colour": "Blue"} and total == "3000"
        assert lines[5] == "1500 52 6"
        assert PASSWORD not in "\n".join(lines)
