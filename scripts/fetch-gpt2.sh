#!/usr/bin/env bash
# Downloads a GPT-2 checkpoint from the Hugging Face hub at a pinned revision,
# resuming cut transfers and checking each file's advertised checksum:
#
#   scripts/fetch-gpt2.sh [gpt2|distilgpt2|gpt2-medium|gpt2-large|gpt2-xl] DIR
#
# Details in scripts/fetch-gpt2.py (standard-library Python).
set -euo pipefail
exec python3 "$(dirname "$0")/fetch-gpt2.py" "$@"
