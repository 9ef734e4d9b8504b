import os

from hypothesis import settings

# A fixed, derandomized profile for CI; `HYPOTHESIS_PROFILE=dev` explores.
settings.register_profile("ci", max_examples=150, derandomize=True, deadline=None)
settings.register_profile("dev", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
