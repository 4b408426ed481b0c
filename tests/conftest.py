import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # test helpers such as reference_search
# ONNX exports of the tests' networks (pipeline/nets/onnx_runtime.py) stay out of the user's cache
os.environ["ALPHAZERO_ONNX_CACHE"] = str(Path(tempfile.gettempdir()) / "alphazero-pipeline-tests-onnx")
