# SPDX-FileCopyrightText: Copyright (c) 1993-2025 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0


from kvpress.presses.base_press import SUPPORTED_MODELS, BasePress
from kvpress.presses.expected_attention_press import ExpectedAttentionPress
from kvpress.presses.scorer_press import ScorerPress


__all__ = [
    "BasePress",
    "ScorerPress",
    "ExpectedAttentionPress",
]
