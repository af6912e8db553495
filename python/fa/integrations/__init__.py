"""fa inside other libraries' model code: `fa.integrations.transformers`
registers fa as a Hugging Face attention implementation."""
