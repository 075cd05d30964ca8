"""Result shaping: text renderings for people and models."""
