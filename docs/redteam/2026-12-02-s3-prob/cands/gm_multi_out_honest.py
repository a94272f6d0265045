import torch
def custom_kernel(data):
    return data.max(), data.argmax()
