"""Image inputs for vision-language models: the options (`spec`), synthetic images (`synth`), their
attachment to each request (`attach`) and images carried by a dataset's rows (`dataset`).

Images travel as chat content parts (`{"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}`)
inside `WorkItem.messages`; `WorkItem.images`, `image_pixels` and `image_bytes` hold their totals.
"""
