//! lower (being written)
