fa.kernel @kÿş {
}
